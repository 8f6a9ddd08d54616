"""Projects: which memory a directory or name addresses, where hooks capture, git facts."""
