"""The one tokenizer, sentence ends and synonyms."""
