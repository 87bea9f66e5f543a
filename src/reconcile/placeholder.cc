namespace slicewright::reconcile {}
