"""The settings mypy's Django plugin reads (``pyproject.toml``): the deployment's settings with
the sandbox on, whatever the environment says, so the sandbox app's models are installed and
typed like every other app's."""

import os

os.environ["SANDBOX"] = "true"

from config.settings import *  # noqa: F403
