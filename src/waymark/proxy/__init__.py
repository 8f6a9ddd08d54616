"""The memory proxy: Waymark for agents without hooks, through their base URL."""
