"""The one error an image read ends in: a sentence the command prints as its single line."""


class ImageError(Exception):
    """The image cannot be read or is refused (hostile, too big, too slow); str() is the line to print."""
