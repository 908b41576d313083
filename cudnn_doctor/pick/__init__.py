"""`pick`: the newest build of a framework (or cuDNN) that runs on every GPU of a machine with its driver, judged
from the facts check collects (or a node's saved report) and the knowledge, and how to install it."""
