"""The admin API (admin keys only): everything under ``/v1/admin/``."""
