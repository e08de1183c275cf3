"""Customer Disputes v1: the dispute document and its state machine, its routes and the
multipart action forms."""
