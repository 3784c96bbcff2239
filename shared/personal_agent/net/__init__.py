"""Network guards shared by everything that calls out to an address a user gave (web_fetch, workflow outputs)."""
