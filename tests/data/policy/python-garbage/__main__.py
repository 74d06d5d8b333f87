"""A pack that prints something other than its port."""
import sys
import time

sys.stdout.write("hello, this is not a port\n")
sys.stdout.flush()
time.sleep(60)
