namespace slicewright::labels {}
