"""The kernel layer: what the host supports, the containment derived from a shell's policy, and the
launcher that applies it to every command."""
