// The resources leave the program: the retained one leaves the state without being deleted.
