"""Texts convert runs a rebuilt encoder on (the reference check, the fidelity gate, int8 calibration): sentences
of many kinds and lengths, and documents joined from them that reach the model's longest input, so that short
texts are padded beside long ones and positions past 128 tokens are exercised."""
from __future__ import annotations

SENTENCES = (
    "Hello.",
    "Thanks!",
    "Where is the train station?",
    "The cat sleeps on the warm windowsill.",
    "I loved this film, the ending made me cry.",
    "Worst purchase ever: it broke after two days.",
    "Interest rates rose by a quarter of a point on Tuesday.",
    "Mix the flour and the butter, then add two eggs and a pinch of salt.",
    "The function returns None when the key is missing from the cache.",
    "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
    "She finished the marathon in three hours and forty-two minutes, a personal best.",
    "Can you recommend a quiet hotel near the old town that accepts dogs?",
    "The committee postponed its decision until the auditors deliver their report next month.",
    "Rain is expected tomorrow afternoon, with strong winds along the coast.",
    "My grandmother grew tomatoes, beans and sunflowers in a tiny garden behind the kitchen.",
    "Error 404: the page you requested could not be found on this server.",
    "Quantum computers use qubits, which can hold a superposition of zero and one.",
    "The museum reopened after a two-year renovation with a new wing for modern sculpture.",
    "He apologised for the delay and promised the parcel would arrive by Friday.",
    "A balanced diet includes vegetables, whole grains, lean protein and plenty of water.",
    "The orchestra played Beethoven's ninth symphony to a sold-out hall.",
    "Our quarterly revenue grew 12% while operating costs stayed flat.",
    "Ce restaurant sert la meilleure soupe à l'oignon de la ville.",
    "Die Brücke wurde im Jahr 1890 aus Stahl und Stein gebaut.",
    "The detective noticed that the clock had stopped at exactly a quarter past nine, long before the storm "
    "knocked out the power, which meant someone had been in the room earlier than the butler claimed.",
    "To reset the router, hold the small button on the back for ten seconds until the lights blink, wait for "
    "it to restart, then connect to the default network printed on the label underneath.",
    "Migratory birds navigate thousands of kilometres using the sun, the stars, the Earth's magnetic field and "
    "landmarks they learned on earlier journeys.",
    "The new library has comfortable chairs, long opening hours and a café, but the wifi drops every few minutes.",
    "When the volcano erupted, ash clouds grounded flights across northern Europe for almost a week.",
    "Please review the attached contract and return a signed copy before the end of the month.",
    "The team shipped the release on time, although two minor bugs were found in the search feature.",
    "Glaciers in the Alps have lost more than half of their volume since 1900.",
    "I'm not sure the plot makes sense, but the acting and the music are wonderful.",
    "The recipe calls for ripe bananas; green ones make the bread dry and bland.",
    "Traffic on the bridge was blocked for hours after a lorry lost its load of oranges.",
    "Children learn languages faster when they hear them spoken at home every day.",
    "The software update fixed the battery drain, but the camera app still crashes at night.",
    "Ancient Romans built aqueducts that carried water dozens of kilometres into their cities.",
    "Our flight was cancelled, so we took the night bus and arrived just in time for breakfast.",
    "The painting shows a fishing village at dawn, with boats drawn up on a pale, empty beach.",
)
