namespace slicewright::cli {}
