"""tutor_build: load a GPU + ML course from disk, check it against the module contract, render its site."""

__version__ = "0.1.0"
