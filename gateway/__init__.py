"""memgate: an OpenAI-compatible reverse proxy that gives chat apps long-term memory."""

from importlib.metadata import PackageNotFoundError, version

try:
    #: The installed distribution's version (pyproject ``[project] version``); MCP's
    #: ``server_info.version`` and the OpenAPI document's ``info.version``.
    __version__ = version("memgate")
except PackageNotFoundError:  # a checkout on PYTHONPATH without the package installed
    __version__ = "0.0.0+unknown"
