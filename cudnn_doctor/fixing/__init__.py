"""`cudnn-doctor fix`: check's errors healed in the environment they are about, journaled first so `fix --undo` puts
the environment back (plan.py decides, pure; activate.py writes the variables' blocks; apply.py runs and undoes)."""
