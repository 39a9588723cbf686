"""The grading sandbox: students' code runs under bubblewrap, and what comes back is read as untrusted data."""
