"""The typed program -> Relax (builder), and Relax -> the target's code: the targets, the build
pipeline and the CPU schedules."""
