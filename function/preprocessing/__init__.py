"""Client bytes and text -> the exact tensors a manifest asks for."""
