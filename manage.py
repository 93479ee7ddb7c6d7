#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    # Settings come from the environment: one missing or wrong is the operator's to fix, told in
    # one line (exit status 1), not a traceback through Django's command machinery.
    try:
        settings.INSTALLED_APPS  # noqa: B018 (reading one loads them all)
    except ImproperlyConfigured as exc:
        sys.exit(f"ImproperlyConfigured: {' '.join(str(exc).split())}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
