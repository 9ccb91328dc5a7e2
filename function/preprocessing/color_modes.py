"""The colour modes an image model is fed in, and the channels each has: the function brings every decoded image
to one of them, and convert checks a sidecar's image input against them. Plain data (convert imports it)."""

# BGR is decoded as RGB and its channels reversed: the order Caffe-trained models (keras.applications ResNet50, VGG)
# take.
CHANNELS = {"RGB": 3, "BGR": 3, "L": 1}
