print("runanywhere")
