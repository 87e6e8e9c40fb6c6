"""Stage 1, the dataset: two observers' meshes per (case, OAR), synthetic or meshed from a
user's masks, and their voxelization on a grid shared by each pair."""
