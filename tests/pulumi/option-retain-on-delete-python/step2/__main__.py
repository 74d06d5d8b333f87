"""The resources leave the program: the retained one leaves the state without being deleted."""

# (The module of the dynamic provider stays: deleting the resources needs it.)
import conformance  # noqa: F401
