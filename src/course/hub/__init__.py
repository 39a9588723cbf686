"""The course on a JupyterHub: who has which role (roster), the hub's settings, each role's Jupyter config."""
