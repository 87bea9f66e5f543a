namespace slicewright::codec {}
