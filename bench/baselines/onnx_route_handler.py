"""ONNX Runtime peer of every route: the same model converted to ONNX (tf2onnx, or bench/minilm_onnx.py for
all-MiniLM-L6-v2), the floor's preprocessing and answers (bench.raw_pipeline, route_answers), loaded at init.
One intra-op thread, like the function's interpreter: a 1,769 MB Lambda has one vCPU."""

import numpy as np
import onnxruntime

from bench.baselines import model_files, route_answers
from bench.raw_pipeline import Pipeline

ONNX_DTYPES = {"tensor(float)": np.float32, "tensor(int32)": np.int32, "tensor(int64)": np.int64,
               "tensor(double)": np.float64}


class OnnxModel(Pipeline):
    def __init__(self, model_dir):
        super().__init__(model_dir)  # manifest.json (+ tokenizer.json) of the converted LiteRT model
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(str(model_dir / "model.onnx"), options,
                                                     providers=["CPUExecutionProvider"])
        # tf2onnx may suffix ":0"; minilm_onnx names its one output sentence_embedding: match by name, else order.
        self._input_types = {self._bare(i.name): (i.name, ONNX_DTYPES[i.type]) for i in self._session.get_inputs()}
        outputs = [o.name for o in self._session.get_outputs()]
        wanted = [spec["name"] for spec in self.manifest["outputs"]]
        by_name = {self._bare(name): name for name in outputs}
        self._outputs = [by_name.get(name, outputs[index]) for index, name in enumerate(wanted)]
        self._output_roles = wanted

    @staticmethod
    def _bare(name: str) -> str:
        return name.split(":")[0]

    def run(self, feed):
        onnx_feed = {}
        for name, array in feed.items():
            onnx_name, dtype = self._input_types[name]
            onnx_feed[onnx_name] = array.astype(dtype, copy=False)
        return dict(zip(self._output_roles, self._session.run(self._outputs, onnx_feed)))


MODEL = OnnxModel(model_files.model_dir())


def handler(event, context):
    return route_answers.answer(MODEL, event)
