"""How the window looks: colours, the style sheet, scroll areas (Qt widgets,
no model)."""
