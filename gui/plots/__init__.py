"""Result plots and playback (pyqtgraph)."""
