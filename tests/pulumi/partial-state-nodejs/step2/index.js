// Nothing declared: the partly created resource is deleted.
