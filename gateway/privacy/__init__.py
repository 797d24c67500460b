"""The privacy toolkit every plugin uses on what others wrote: masks, one-line fields, framed texts."""

from gateway.privacy.framing import frame, new_mark, one_line
from gateway.privacy.masks import MASKS_VERSION, clip, mask, mask_secrets, mask_url

__all__ = ["MASKS_VERSION", "clip", "frame", "mask", "mask_secrets", "mask_url", "new_mark", "one_line"]
