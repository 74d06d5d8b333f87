"""Two resources (registered as res2, then res1)."""

from testresources import Random

Random("res2", length=10)
Random("res1", length=10)
