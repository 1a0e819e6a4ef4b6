/// User messages of 40 tokens each (SmolLM2's tokenizer), all different from their first word on, so that no
/// request finds any of another's user text in the KV cache. The driver reports each one's token count.
let benchMessages: [String] = [
    "I am planning a small vegetable garden behind my house this spring. Which three vegetables are easiest for a beginner to grow, and how often should I water them in hot weather? Thank you very much.",
    "Could you explain in simple words why the sky looks blue during the day but turns orange and red around sunset? Please keep the answer short and clear for a young reader. Thank you very much.",
    "My laptop has become very slow over the last few months. What are some simple things I can check or clean up myself before I take it to a repair shop in town? Thank you very much.",
    "Write a friendly two sentence message to a neighbour thanking them for looking after my cat while I was away on holiday for a week last month. Keep it warm and simple. Thank you very much.",
    "What is the difference between weather and climate? Give me one example of each so that I can explain it to my ten year old son tonight at dinner before bedtime. Thanks a lot for your help.",
    "Suggest a healthy breakfast that I can prepare in less than ten minutes on a busy morning, using ingredients that most people already have in their kitchen at home, please. Thanks a lot for your help.",
    "Tell me how a bicycle stays upright while it is moving, and why it falls over so easily when it stands still. A short answer is fine, thank you so much for your help.",
    "Help me plan a relaxing Sunday afternoon in a small town with a river, a museum and a park. I would like to be home again by seven. Thank you very much for your help.",
    "Name three good habits that help people sleep better at night, and explain briefly why each of them works. I often wake up tired even after eight hours of sleep. Thanks a lot for your help.",
    "Recommend a classic novel for someone who enjoys adventure stories at sea, and tell me in one or two sentences what the book is about without any spoilers at all. Thanks a lot for your help.",
    "Explain how to make a simple paper airplane that flies far. I want to teach my niece on Saturday, so the steps should be easy for a child to follow. Thank you very much.",
    "Why do cats purr, and does it always mean that they are happy? My old cat purrs a lot at the vet, which seems strange to me. Thanks a lot for your help.",
    "Give me a short list of tips for speaking confidently in front of a group of people at work. I have to present our team's results next Tuesday morning at nine. Thank you very much.",
    "Describe the water cycle in four short steps, starting with the sun warming the ocean. This is for a science poster that my daughter is making for her school project. Thanks a lot for your help.",
]

/// The prompt of the decode measurement: asks for a long answer so that greedy decoding runs for many tokens.
let decodeMessage = "Write a long story about a lighthouse keeper who finds a mysterious map in an old bottle on the beach."
