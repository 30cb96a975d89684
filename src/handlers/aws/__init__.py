"""AWS Lambda: the functions' entrypoints and the adapter from Lambda events to the doors' ASGI apps."""
