"""The program fails between the two registrations: the state keeps both resources."""

from testresources import Random

Random("res2", length=10)
raise Exception("This is a test error")
Random("res1", length=10)
