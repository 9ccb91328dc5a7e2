"""A Hugging Face / sentence-transformers encoder directory (config.json, model.safetensors, tokenizer.json,
modules.json, 1_Pooling/config.json) rebuilt in Keras and exported as the SavedModel the pipeline converts."""
