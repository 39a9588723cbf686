"""Evidence of copying between one lesson's submissions: shared rare wrong answers, shared free text, shared code."""
