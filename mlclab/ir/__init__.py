"""Relax construction, the build pipeline, schedules and the IR texts."""
