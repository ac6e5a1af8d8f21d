"""``python -m gateway.cli``: the ``memgate`` command (:func:`gateway.cli.main.main`)."""

from gateway.cli.main import main

if __name__ == "__main__":
    main()
