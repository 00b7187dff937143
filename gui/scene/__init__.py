"""The 3D view and what is drawn in it (pyvista)."""
