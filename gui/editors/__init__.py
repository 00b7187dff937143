"""The robot tables and the pose sliders."""
