"""What CloudFormation would create from a template whose parameters all keep their defaults.

serverless.yml turns some params into template Parameters and Conditions (CORS origins, reserved concurrency,
alarms); asserting on the raw JSON would test the Fn::If, not the outcome. `deployed(template)` evaluates
conditions, Fn::If, parameter Refs, AWS::NoValue and Fn::Join/Split over known strings, and leaves every other
intrinsic (GetAtt, Refs to resources, Sub) as written.
"""
from __future__ import annotations

NO_VALUE = object()


class Evaluator:
    def __init__(self, template: dict):
        self.template = template
        self.parameters = {name: self._default(spec) for name, spec in template.get("Parameters", {}).items()}

    @staticmethod
    def _default(spec: dict):
        value = str(spec["Default"])
        return value.split(",") if spec["Type"] == "CommaDelimitedList" else value

    def condition(self, name: str) -> bool:
        return self._truth(self.template["Conditions"][name])

    def _truth(self, node) -> bool:
        (function, argument), = node.items()
        if function == "Condition":
            return self.condition(argument)
        if function == "Fn::Equals":
            left, right = (self.value(a) for a in argument)
            return left == right
        if function == "Fn::Not":
            return not self._truth(argument[0])
        if function == "Fn::And":
            return all(self._truth(a) for a in argument)
        if function == "Fn::Or":
            return any(self._truth(a) for a in argument)
        raise ValueError(f"not a condition function: {function}")

    def value(self, node):
        if isinstance(node, list):
            return [v for v in (self.value(item) for item in node) if v is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            (function, argument), = node.items()
            if function == "Ref" and argument == "AWS::NoValue":
                return NO_VALUE
            if function == "Ref" and argument in self.parameters:
                return self.parameters[argument]
            if function == "Fn::If":
                chosen = argument[1] if self.condition(argument[0]) else argument[2]
                return self.value(chosen)
            if function == "Fn::Join":
                parts = self.value(argument[1])
                if isinstance(parts, list) and all(isinstance(p, str) for p in parts):
                    return argument[0].join(parts)
            if function == "Fn::Split":
                text = self.value(argument[1])
                if isinstance(text, str):
                    return text.split(argument[0])
        resolved = {key: self.value(item) for key, item in node.items()}
        return {key: item for key, item in resolved.items() if item is not NO_VALUE}


def deployed(template: dict) -> dict:
    """The template's Resources and Outputs as CloudFormation would create them with the parameter defaults."""
    evaluator = Evaluator(template)

    def kept(section: dict) -> dict:
        return {name: evaluator.value(body) for name, body in section.items()
                if "Condition" not in body or evaluator.condition(body["Condition"])}

    return {"Resources": kept(template["Resources"]), "Outputs": kept(template.get("Outputs", {}))}
