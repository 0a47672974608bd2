"""Tool packs shipped beside tether's core and registered through its public extension point (entry points
in the `tether.tool_packs` group), exactly as a third-party package would; each needs its own extra."""
