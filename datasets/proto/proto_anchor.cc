// Keeps placerl_proto a valid library while datasets/proto/ has no schema.
