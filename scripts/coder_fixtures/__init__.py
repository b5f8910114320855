"""The fixture writers of scripts/make-coder-fixtures.py: APNG, and BMP with ICO/CUR."""
