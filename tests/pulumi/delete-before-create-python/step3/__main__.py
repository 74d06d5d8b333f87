from resource import Resource

# base is replaced again while dependent-2/3/4 leave the program: dependent-4 is deleted ahead
# of base (it would be replaced) and is not registered again.
a = Resource("base", unique_key=1, state=100)
b = Resource("dependent", state=a.state)
