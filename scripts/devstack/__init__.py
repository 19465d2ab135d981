"""The Python half of scripts/run-local: the local stack's folder, config, service configs, crash
clean-up and health wait. Not part of the jellybit package (a wheel or an image never needs it);
scripts/run-local and the tests put scripts/ on the path to import it."""
