namespace slicewright::net {}
