"""Lets `python -m cudnn_doctor` do what the `cudnn-doctor` command does."""
from .cli import main

if __name__ == "__main__":
    main()
