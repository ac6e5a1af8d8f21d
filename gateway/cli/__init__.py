"""The ``memgate`` command line (:mod:`.main`) and its commands, one module each."""
