import pulumi

# xyz is exported again before the program fails; foo is not, and keeps its previous value.
pulumi.export("xyz", "DEF")

raise Exception("program error")

pulumi.export("foo", 1)  # never reached
