"""Runs under .venv-petastorm: hands :data:`text_codec.CAPTIONS` to the real Petastorm's
``dict_to_spark_row`` with :class:`text_codec.TextCodec` and prints, as JSON, what the codec
received, what Petastorm stored and what the codec decodes the stored cells to.

Never imported by the tests: they run it as a script."""

import json
import sys

from petastorm.unischema import Unischema, UnischemaField, dict_to_spark_row

sys.path.insert(0, sys.argv[1])
from text_codec import CAPTIONS, FIELD, TextCodec  # noqa: E402

codec = TextCodec()
field = UnischemaField(*FIELD, codec, False)
schema = Unischema("Captions", [field])
stored = [dict_to_spark_row(schema, {"caption": text}).caption for text in CAPTIONS]
print(json.dumps({"received": codec.received, "stored": [bytes(s).hex() for s in stored],
                  "decoded": [str(codec.decode(field, bytes(s))) for s in stored]}))
