"""The API loop (`socratic run`): the model client, the conversation, the tools and the
campaign that drives them. Imports harness.engine and harness.core."""
